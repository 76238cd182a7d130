"""The client speaks as the person who lived the facts (first person) and sees the dialogue
so far (the default client strategy)."""

from lecode.strategies.declarations import ClientStrategy

STRATEGY = ClientStrategy(
    name="first_person_dialogue", templates={"answer": "client/first_person_dialogue"}
)
