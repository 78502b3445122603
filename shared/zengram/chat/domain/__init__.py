"""The chat context layer (Mnexium-style; docs/chat.md): subject memories, chat history, agent state, records,
system prompts, recall events and learning, and how a completion's messages are assembled from them. Pure."""
