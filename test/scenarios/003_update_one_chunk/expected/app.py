def greet(name):
    message = f"Hello, {name}!"
    return message


def main():
    print(greet("world"))
