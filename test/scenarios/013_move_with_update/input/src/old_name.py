VALUE = 1
print(VALUE)
