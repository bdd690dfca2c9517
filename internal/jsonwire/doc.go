// Package jsonwire reads and writes JSON text by appending to and slicing byte buffers, with
// no reflection and no allocation in steady state: one string escaper, one value writer and
// one pull scanner for every package that renders request bodies, mock responses, live
// history or exports, and for every parser of response events and tokenizer.json.
//
// Why not encoding/json: a million-request plan renders a million bodies, a streaming mock
// writes an event per token, and analyze parses every event of every request. Measured on a
// 512-token chat body the writer is about 2.5× faster than encoding/json (ASCII is skipped
// eight bytes at a time; text dense in multi-byte characters is at par); a vLLM chat chunk
// parses about 10–14× faster than json.Unmarshal into a typed struct; nothing allocates
// (BenchmarkAppendString, BenchmarkScanChatChunk and BenchmarkSkip here report the ratios;
// endpoint's BenchmarkRenderChat512 and BenchmarkParseChatChunk for the whole request path).
//
// # The escaping rule
//
// A string is written exactly as encoding/json writes it with SetEscapeHTML(false), byte for
// byte (FuzzAppendString checks it):
//
//   - '"' and '\\' are backslash-escaped;
//   - \b \f \n \r \t use their two-byte escapes, every other byte below 0x20 is \u00XX with
//     lowercase hex digits;
//   - U+2028 and U+2029 are written \u2028 and \u2029 (JavaScript reads them as line
//     terminators; encoding/json escapes them even with HTML escaping off);
//   - each byte that is not part of valid UTF-8 becomes \ufffd (U+FFFD);
//   - everything else, '<', '>', '&' and all other non-ASCII text included, is copied as is.
//
// json.Marshal's default (HTML escaping on) also writes '<', '>' and '&' as \u003c, \u003e and
// \u0026. We never do: the bytes go to servers and into files, never into an HTML page (report/ embeds
// its page data with json.Marshal, which does). So our bytes equal json.Marshal's for every string
// without those three characters, and decode to the same string for every input.
//
// Reading follows encoding/json too: escapes, surrogate pairs (an unpaired one becomes
// U+FFFD), invalid UTF-8 replaced by U+FFFD, control bytes in strings rejected, nesting
// bounded.
package jsonwire
