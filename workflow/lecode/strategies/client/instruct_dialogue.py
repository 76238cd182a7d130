"""The client is instructed to play a role from the listed case facts and sees the dialogue
so far."""

from lecode.strategies.declarations import ClientStrategy

STRATEGY = ClientStrategy(
    name="instruct_dialogue", templates={"answer": "client/instruct_dialogue"}
)
