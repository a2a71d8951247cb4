this is not C
