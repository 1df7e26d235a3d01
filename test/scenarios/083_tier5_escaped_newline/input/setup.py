def setup():
    a = 1
    b = 2
    return a + b
