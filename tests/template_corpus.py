"""The real templates in tests/templates (sources in tests/templates/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "templates"
ALL_TEMPLATES = sorted(CORPUS.glob("*.jinja"))

# The 23 templates whose renders were checked first, by the family of delimiters they write.
CHECKED_FAMILIES: dict[str, str] = {
    **dict.fromkeys(
        [
            "Hermes-2-Pro-Llama-3-8B-tool_use",
            "Hermes-3-Llama-3.1-8B-tool_use",
            "QwQ-32B",
            "Qwen2.5-7B-Instruct",
            "Qwen3-0.6B",
            "Qwen3-4B-Thinking-2507",
            "Qwen3-Coder-30B-A3B-Instruct",
            "Qwen3-Instruct-2507",
        ],
        "chatml_qwen",
    ),
    **dict.fromkeys(
        [
            "DeepSeek-R1-0528-Qwen3-8B",
            "DeepSeek-R1-Distill-Llama-8B",
            "DeepSeek-R1-Distill-Qwen-32B",
            "DeepSeek-R1",
            "DeepSeek-V3-0324",
            "DeepSeek-V3-api-tokenizer",
            "DeepSeek-V3.1",
            "DeepSeek-V3.2-llamacpp",
            "DeepSeek-V3",
        ],
        "deepseek",
    ),
    **dict.fromkeys(
        [
            "Llama-3.1-8B-Instruct",
            "Llama-3.2-3B-Instruct",
            "Llama-3.3-70B-Instruct",
            "cogito-v1-preview-llama-3B",
            "llama-3-firefunction-v2",
            "rnj-1-instruct",
        ],
        "llama3",
    ),
}
CHECKED_TEMPLATES = sorted(CORPUS / f"{name}.jinja" for name in CHECKED_FAMILIES)


# Hy3's template with its tag suffix emptied: the tags as its preview's tokenizer spells them
# (no template in the corpus writes them bare).
HY3_BARE_SUFFIX = ("{%- set HYTK = ':opensource' %}", "{%- set HYTK = '' %}")


def template(name: str) -> Path:
    return CORPUS / f"{name}.jinja"


def special_tokens(path: Path) -> dict[str, str]:
    """The model's usual bos/eos tokens, told by the delimiters its template writes."""
    source = path.read_text(encoding="utf-8")
    if path.stem.startswith(("Hermes-2-Pro", "Hermes-3")):
        return {"bos_token": "<|begin_of_text|>", "eos_token": "<|im_end|>"}  # ChatML on a Llama 3 tokenizer
    if "<｜User｜>" in source:
        return {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}
    if "<|start_header_id|>" in source:
        return {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
    if "<global_setting>" in source:
        return {"bos_token": "<s>", "eos_token": "</s>"}  # ERNIE 4.5: ChatML turns, its own tokens
    if "<|endofturn|>" in source:
        return {"eos_token": "<|endofturn|>"}  # HyperCLOVA X: ChatML turns, an answer ends <|im_end|><|endofturn|>
    if "<|im_start|>" in source:
        return {"eos_token": "<|im_end|>"}
    if "<|START_OF_TURN_TOKEN|>" in source:
        return {"bos_token": "<BOS_TOKEN>", "eos_token": "<|END_OF_TURN_TOKEN|>"}  # Cohere
    if "<start_of_turn>" in source or "<|turn>" in source:
        return {"bos_token": "<bos>", "eos_token": "<eos>"}
    if "<|end_of_msg|>" in source:
        return {"eos_token": "<|end_of_msg|>"}  # Kimi K3
    if "<end_of_sentence>" in source:
        return {"bos_token": "<begin_of_document>", "eos_token": "<end_of_sentence>"}  # MiniMax-M1
    if "[e~[" in source:
        return {"eos_token": "[e~["}  # MiniMax-M2 and M3
    return {"bos_token": "<s>", "eos_token": "</s>"}
