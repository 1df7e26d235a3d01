VALUE = 2
print(VALUE)
