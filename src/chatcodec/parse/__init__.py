"""Parsing: the delimiter lexer, the incremental LALR engine, readers of assistant turns and transcripts."""
