"""A small byte-level BPE tokenizer built in code, wrapped as a transformers tokenizer carrying a
real chat template: what a server hands a parser, without downloading a model."""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

import chatcodec


def tiny_tokenizer(
    template_name: str,
    *,
    markers: Iterable[str],
    special: Iterable[str] = (),
    eos_token: str,
    bos_token: str | None = None,
    corpus: Iterable[str] = (),
) -> PreTrainedTokenizerFast:
    """A tokenizer whose vocabulary is learnt from ``corpus`` plus the rendered sample
    conversation; ``markers`` become single added tokens (``special`` ones are special tokens,
    dropped by ``skip_special_tokens``)."""
    template = chatcodec.load(template_name).template
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    text = list(corpus) + ["The weather in Paris is 18 C. Let me check {\"city\": \"Paris\"} get_weather"] * 5
    trainer = trainers.BpeTrainer(
        vocab_size=600, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(text, trainer)
    special = list(special)
    bpe.add_tokens([AddedToken(marker, special=False, normalized=False) for marker in markers if marker not in special])
    bpe.add_special_tokens([AddedToken(marker, special=True, normalized=False) for marker in special])
    wrapped = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token=eos_token, bos_token=bos_token)
    wrapped.chat_template = template.source
    wrapped.name_or_path = f"tiny/{template_name}"
    return wrapped
