"""Checks on rendered conversations: round trips and their loss reports, spans and masks."""
