"""A safe pickle machine driven by an opcode table (spec/pickle.md).  Nothing from a file is called."""
