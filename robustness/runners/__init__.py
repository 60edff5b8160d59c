"""Model backends behind one protocol."""
