# Greeting module
print("Don't panic - it's fine")
print('done')
