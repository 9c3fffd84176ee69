"""abridged inside agent frameworks: thin adapters from a framework's messages to abridged's and
back, the ``ContextManager`` doing the work (``abridged.integrations.langchain``: a LangChain
v1 agent middleware). Each module imports its framework lazily, from its extra."""
