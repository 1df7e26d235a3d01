def setup():
    a = 10
    b = 20
    return a + b
