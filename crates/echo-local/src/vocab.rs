//! The model's tokenizer, built from the GGUF's own metadata (`tokenizer.ggml.*`): the
//! byte-level BPE vocabulary and merges, the pre-tokenizer its `tokenizer.ggml.pre` names, and
//! the special tokens. Encoding goes through the `tokenizers` crate; decoding and the grammar
//! engine use each token's exact bytes.

use crate::error::LocalError;
use crate::gguf::Metadata;
use std::collections::HashMap;
use tokenizers::models::bpe::BPE;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{AddedToken, PreTokenizerWrapper, SplitDelimiterBehavior, Tokenizer};

/// GPT-2's pattern, which `ByteLevel` applies itself when asked to.
const QWEN2_PATTERN: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const LLAMA3_PATTERN: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// GGUF token types (`tokenizer.ggml.token_type`).
const TYPE_CONTROL: i32 = 3;
const TYPE_USER_DEFINED: i32 = 4;

/// Token text that ends a turn in the chat formats the built-in model knows.
const END_OF_TURN: [&str; 4] = ["<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>"];

/// One model's tokenizer.
pub struct Vocab {
    tokenizer: Tokenizer,
    /// Each token's bytes (control tokens: their text).
    bytes: Vec<Vec<u8>>,
    /// Control tokens (`<|im_start|>`, …): never part of answer text.
    control: Vec<bool>,
    eos: u32,
    bos: Option<u32>,
    add_bos: bool,
    /// Tokens that end the answer.
    stops: Vec<u32>,
}

impl Vocab {
    /// The tokenizer a GGUF file describes.
    pub(crate) fn from_gguf(md: &Metadata) -> Result<Vocab, LocalError> {
        let model = md.string("tokenizer.ggml.model")?;
        if model != "gpt2" {
            return Err(md.unsupported(format!(
                "its tokenizer is {model:?}; the built-in runtime reads byte-level BPE (\"gpt2\") \
                 tokenizers, as SmolLM2, Qwen2.5, Qwen3 and Llama 3 use"
            )));
        }
        let tokens = md.strings("tokenizer.ggml.tokens")?;
        let merges = md.strings("tokenizer.ggml.merges")?;
        let types = md.i32s("tokenizer.ggml.token_type").unwrap_or_default();
        let pre = md.opt_string("tokenizer.ggml.pre").unwrap_or("default");
        let eos = md.u32("tokenizer.ggml.eos_token_id")?;
        let bos = md.opt_u32("tokenizer.ggml.bos_token_id");
        let add_bos = md.opt_bool("tokenizer.ggml.add_bos_token").unwrap_or(false);

        let n = u32::try_from(tokens.len())
            .map_err(|_| md.corrupt("the vocabulary has more than 2^32 tokens".into()))?;
        if eos >= n || bos.is_some_and(|b| b >= n) {
            return Err(md.corrupt(format!(
                "end/begin token id ({eos}, {bos:?}) is outside the {n}-token vocabulary"
            )));
        }
        let mut ids = HashMap::with_capacity(tokens.len());
        let mut bytes = Vec::with_capacity(tokens.len());
        let mut control = Vec::with_capacity(tokens.len());
        let mut special_added = Vec::new();
        let mut plain_added = Vec::new();
        let unicode_to_byte = unicode_to_byte();
        for (id, text) in tokens.iter().enumerate() {
            let kind = types.get(id).copied().unwrap_or(1);
            let is_control = kind == TYPE_CONTROL;
            let raw = is_control || kind == TYPE_USER_DEFINED;
            let b = if raw {
                text.as_bytes().to_vec()
            } else {
                text.chars()
                    .map(|c| unicode_to_byte.get(&c).copied())
                    .collect::<Option<Vec<u8>>>()
                    .ok_or_else(|| {
                        md.corrupt(format!("token {id} ({text:?}) is not byte-level BPE text"))
                    })?
            };
            if is_control {
                special_added.push(AddedToken::from(text.clone(), true));
            } else if kind == TYPE_USER_DEFINED {
                plain_added.push(AddedToken::from(text.clone(), false));
            }
            bytes.push(b);
            control.push(is_control);
            ids.insert(text.clone(), id as u32);
        }

        let vocab: tokenizers::models::bpe::Vocab = ids.clone().into_iter().collect();
        let merges: Vec<(String, String)> = merges
            .iter()
            .map(|m| {
                m.split_once(' ')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .ok_or_else(|| md.corrupt(format!("merge {m:?} is not two tokens")))
            })
            .collect::<Result<_, _>>()?;
        let bpe = BPE::builder()
            .vocab_and_merges(vocab, merges)
            .ignore_merges(pre == "llama-bpe")
            .build()
            .map_err(|e| md.corrupt(format!("its BPE vocabulary cannot be built: {e}")))?;
        let mut tokenizer = Tokenizer::new(bpe);
        tokenizer.with_pre_tokenizer(Some(pre_tokenizer(pre, md)?));
        tokenizer.with_decoder(Some(tokenizers::decoders::byte_level::ByteLevel::default()));
        tokenizer
            .add_special_tokens(special_added)
            .and_then(|_| tokenizer.add_tokens(plain_added))
            .map_err(|e| md.corrupt(format!("its added tokens cannot be registered: {e}")))?;

        let mut stops = vec![eos];
        for text in END_OF_TURN {
            if let Some(&id) = ids.get(text)
                && !stops.contains(&id)
            {
                stops.push(id);
            }
        }
        if let Some(eot) = md.opt_u32("tokenizer.ggml.eot_token_id")
            && eot < n
            && !stops.contains(&eot)
        {
            stops.push(eot);
        }
        Ok(Vocab {
            tokenizer,
            bytes,
            control,
            eos,
            bos,
            add_bos,
            stops,
        })
    }

    /// The token ids of a prompt: a BOS token first when the model asks for one, then the
    /// ids of `text`.
    pub(crate) fn encode_prompt(&self, text: &str) -> Result<Vec<u32>, LocalError> {
        let mut ids = Vec::new();
        if self.add_bos
            && let Some(bos) = self.bos
        {
            ids.push(bos);
        }
        ids.extend(self.encode_text(text)?);
        Ok(ids)
    }

    /// The token ids of `text`; special tokens written in it (`<|im_start|>`) become their
    /// ids.
    pub fn encode_text(&self, text: &str) -> Result<Vec<u32>, LocalError> {
        let encoding = self
            .tokenizer
            .encode_fast(text, false)
            .map_err(|e| LocalError::Tokenize(e.to_string()))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// The bytes of one token (control tokens: their text).
    pub(crate) fn token_bytes(&self, id: u32) -> &[u8] {
        self.bytes.get(id as usize).map_or(&[], Vec::as_slice)
    }

    /// Whether `id` is a control token (never answer text).
    pub(crate) fn is_control(&self, id: u32) -> bool {
        self.control.get(id as usize).copied().unwrap_or(false)
    }

    /// The text of `ids`, control tokens left out.
    pub fn decode(&self, ids: &[u32]) -> String {
        let mut out = Vec::new();
        for &id in ids {
            if !self.is_control(id) {
                out.extend_from_slice(self.token_bytes(id));
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Tokens that end an answer.
    pub(crate) fn stops(&self) -> &[u32] {
        &self.stops
    }

    /// The end-of-sequence token.
    pub(crate) fn eos(&self) -> u32 {
        self.eos
    }

    /// Vocabulary size.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }
}

fn pre_tokenizer(pre: &str, md: &Metadata) -> Result<PreTokenizerWrapper, LocalError> {
    let split = |pattern: &str| -> Result<PreTokenizerWrapper, LocalError> {
        Split::new(
            SplitPattern::Regex(pattern.to_string()),
            SplitDelimiterBehavior::Isolated,
            false,
        )
        .map(PreTokenizerWrapper::Split)
        .map_err(|e| LocalError::Tokenize(format!("pre-tokenizer pattern: {e}")))
    };
    Ok(match pre {
        "default" | "gpt2" => ByteLevel::new(false, true, true).into(),
        "smollm" => Sequence::new(vec![
            Digits::new(true).into(),
            ByteLevel::new(false, true, true).into(),
        ])
        .into(),
        "qwen2" => Sequence::new(vec![
            split(QWEN2_PATTERN)?,
            ByteLevel::new(false, false, false).into(),
        ])
        .into(),
        "llama-bpe" | "llama3" => Sequence::new(vec![
            split(LLAMA3_PATTERN)?,
            ByteLevel::new(false, true, false).into(),
        ])
        .into(),
        other => {
            return Err(md.unsupported(format!(
                "its pre-tokenizer {other:?} is not one the built-in runtime knows \
                 (gpt2, smollm, qwen2, llama-bpe)"
            )));
        }
    })
}

/// GPT-2's byte-level alphabet, read backwards: the printable character that stands for each
/// byte in the vocabulary's token strings.
fn unicode_to_byte() -> HashMap<char, u8> {
    let mut printable: Vec<u8> = (b'!'..=b'~').collect();
    printable.extend(0xA1..=0xAC);
    printable.extend(0xAE..=0xFF);
    let mut map = HashMap::with_capacity(256);
    for &b in &printable {
        map.insert(char::from(b), b);
    }
    let mut next = 0u32;
    for b in 0u8..=255 {
        if !printable.contains(&b) {
            if let Some(c) = char::from_u32(256 + next) {
                map.insert(c, b);
            }
            next += 1;
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_alphabet_covers_every_byte_once() {
        let map = unicode_to_byte();
        assert_eq!(map.len(), 256);
        let mut seen: Vec<u8> = map.values().copied().collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 256);
        assert_eq!(map.get(&'Ġ'), Some(&b' '));
        assert_eq!(map.get(&'Ċ'), Some(&b'\n'));
        assert_eq!(map.get(&'a'), Some(&b'a'));
    }
}
