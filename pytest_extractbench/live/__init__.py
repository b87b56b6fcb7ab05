"""The live layer: answers from OpenAI-compatible servers (or a Python callable), requested ahead of the items.

- options.py: the live options of a run; endpoints.py: where each model is served (given URLs, or a server
  backend from backends/, the embedded llama-server by default);
- prompts.py (the chat messages), dialects.py (structured output per server, cache keys), transport.py
  (URL, key, timeouts, the injectable HTTP client), client.py (one completion with retries),
  completions.py (reading an answer), errors.py (server errors -> error classes), connection.py (the one
  connection check);
- pipeline.py (requests ahead of items, failover over replicas, replay), journal.py (journal and cache),
  extractor.py (a Python callable as the answerer), context.py and max_tokens.py (context and output sizing);
- judge.py and embeddings.py (the semantic scores' clients, sharing scorer_servers.py's key lookup, URL check,
  bounded answers and masking, and verdict_cache.py), installed as scoring's backends by scoring_backends.py.
"""
