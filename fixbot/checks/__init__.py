"""(face to be written)"""
