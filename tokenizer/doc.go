// Package tokenizer is an exact, pure-Go implementation of HuggingFace byte-level BPE
// tokenizers (the tokenizer.json files of Qwen2/3, Llama 3, GPT-2/Roberta, Mistral-Nemo
// and other GPT-4-style models), with Qwen3's tokenizer built in.
//
// plan uses it to build prompts of exactly N tokens under the server's tokenizer, and
// analyze to count output tokens offline; both need the ids the server's own tokenizer
// would produce, not an approximation. "Exact" is tested: every line of
// testdata/tokenizer/qwen3_golden.jsonl, produced by HuggingFace's Rust tokenizers 0.23.2,
// must come out identical.
//
// # Loading
//
// Load and LoadWithOptions take "builtin" (Qwen3, embedded gzip-compressed, parsed once on
// first use), the path of a tokenizer.json or of a folder holding one, or a HuggingFace
// model id such as "Qwen/Qwen3-8B" (optionally "id@revision"), resolved in this order: the
// local hub cache (<hub>/models--Qwen--Qwen3-8B/snapshots/<commit>/tokenizer.json, the
// commit refs/<revision> names); the table of model ids that ship the builtin
// tokenizer.json byte for byte (BuiltinModels, checked by SHA-256), with one notice line;
// else a download of tokenizer.json and tokenizer_config.json from the Hub into that cache,
// in huggingface_hub's own layout (hub.go), checked against the hash the Hub announces. A
// tokenizer.json whose announced SHA-256 is the builtin's is not downloaded at all. Load
// never uses the network. The package reads no environment variables: commands pass
// LoadWithOptions the result of EnvLoadOptions(os.Getenv) (HF_HOME, HF_HUB_CACHE,
// HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE) with their flags applied (Revision,
// TrustRemoteCode, Progress). docs/tokenizers.md is the user's guide.
//
// # What is supported
//
// Parse accepts a BPE model (ranked merges, in either of HuggingFace's two spellings;
// optional ignore_merges, unk_token, fuse_unk, byte_fallback), no normalizer or NFC,
// pre-tokenizers made of Split steps (a Regex, behavior Isolated) followed by one
// ByteLevel (add_prefix_space and use_regex honoured), a ByteLevel decoder (or none),
// and ByteLevel, TemplateProcessing, Roberta or Bert post-processors (used only by
// EncodeWithSpecialTokens). Anything else (WordPiece or Unigram models, NFKC,
// Metaspace, a regex outside the known families, dropout...) is an error that names the
// feature. truncation and padding are ignored: they shape batches, and Encode never
// truncates or pads.
//
// # How encoding works
//
// The steps mirror HuggingFace's pipeline, each written for speed:
//
//   - Added tokens (<|im_start|>, <think>...) are cut out first, leftmost-longest, in the
//     raw text for "normalized": false tokens and in the normalized text otherwise, with
//     single_word, lstrip and rstrip applied (added.go).
//   - NFC normalization (normalize.go) with tables generated from the Unicode Character
//     Database (gen_nfc.go, Unicode 15.0, the version of Go's unicode package); text that
//     is already NFC is detected by a quick check and costs no allocation.
//   - The Split regex (pretokenize.go) uses look-ahead (\s+(?!\S)) that Go's regexp lacks.
//     It is not run as a regex: the pattern is cut into its alternatives, each of which
//     must be one of the standard pieces of the GPT-2, Llama 3 (cl100k), Qwen2/3, o200k
//     and Tekken patterns, and each piece is a hand-written matcher over a two-level
//     table of Unicode classes that returns exactly what Oniguruma's backtracking would.
//     Tests compare it with a regexp-based model on random and fuzzed text.
//   - Bytes are never mapped to GPT-2's printable alphabet: each byte's token id is looked
//     up once at load time, and merges are a hash table keyed by the pair of ids
//     (bytelevel.go, bpe.go).
//   - BPE merges follow HuggingFace's priority-queue algorithm exactly (lowest rank,
//     then leftmost; stale entries skipped), which is O(n log n): a 20 KB unbroken word
//     takes milliseconds.
//   - Pieces and their ids are cached per encoder (wordcache.go); once the words of a
//     text have been seen, encoding it allocates nothing.
//
// BenchmarkEncode reports tokens per second on one core, and the word cache's speed-up
// over the same encoder without it: with a warm cache, encoding Shakespeare runs at
// several million tokens per second on the development machine, where HuggingFace's Rust
// tokenizer manages 0.34 million; merging every piece afresh is about four times slower.
//
// # Concurrency
//
// A *Tokenizer is immutable after loading and safe for concurrent use. It lends each
// call one of a few encoders (scratch buffers plus a word cache, about 3 MB when full)
// under a lock; a lone goroutine always gets the same one, so its cache stays warm, and
// unlike a sync.Pool the encoders survive garbage collections.
//
// # Streams
//
// EncodeStream is `plan tokenize`'s loop: a whole text, or one JSON object with a "text" per
// line, encoded and printed as ids or counts, one line each; an *InputError names what in the
// input is wrong (the command's exit status 2), any other error is in reading or writing.
//
// # Where it differs from HuggingFace, on purpose
//
// HuggingFace accepts only valid UTF-8. Here bytes that are not valid UTF-8 are kept,
// treated as punctuation-like characters and encoded through their byte tokens, so that
// AppendDecode(Encode(s)) gives s back for any s whose valid parts are NFC. Decode
// replaces invalid sequences with U+FFFD the way HuggingFace (Rust's from_utf8_lossy)
// does. The letter and number classes come from Go's unicode tables (Unicode 15.0);
// HuggingFace's Oniguruma may be a version older, which matters only for characters
// assigned in between.
package tokenizer
