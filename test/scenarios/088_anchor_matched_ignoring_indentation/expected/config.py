class Config:
    def dump(self):
        return {}

    def load(self):
        return {"debug": False}
