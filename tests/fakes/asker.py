"""An Asker that gives the same answer every time and keeps the questions it was shown."""

from ports.asker import Answer


class Says:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.questions: list[str] = []

    async def ask(self, message: str) -> Answer:
        self.questions.append(message)
        return self.answer
