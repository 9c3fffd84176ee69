"""abridged inside agent frameworks: thin adapters from a framework's messages to abridged's and
back, the ``ContextManager`` doing the work (``abridged.integrations.langchain``: a LangChain
v1 agent middleware; ``abridged.integrations.pydantic_ai``: a pydantic-ai capability;
``abridged.integrations.openai_agents``: an Agents SDK session and input filter). Each
module needs its framework, from its extra; importing ``abridged`` loads none of them."""
