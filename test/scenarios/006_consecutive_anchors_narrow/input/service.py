class Reader:
    def open(self):
        return None

    def close(self):
        return None


class Writer:
    def open(self):
        return None

    def close(self):
        return None
