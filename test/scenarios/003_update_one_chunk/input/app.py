def greet(name):
    message = "Hello " + name
    return message


def main():
    print(greet("world"))
