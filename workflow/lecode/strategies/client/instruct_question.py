"""The client is instructed to play a role from the listed case facts and sees only the
current question."""

from lecode.strategies.declarations import ClientStrategy

STRATEGY = ClientStrategy(
    name="instruct_question", templates={"answer": "client/instruct_question"}
)
