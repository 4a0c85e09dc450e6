"""Model definitions built from ``spiraltorch.nn`` layers (BERT encoder, WordPiece tokenizer,
a tiny text task for LoRA fine-tuning)."""
