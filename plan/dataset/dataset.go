// Package dataset turns inputs into a Dataset: the conversations a plan sends, before timing
// and rendering. Synthetic prompts come from an embedded public-domain corpus; traces and custom
// files (mooncake_trace, sharegpt, single_turn, multi_turn, random_pool, raw_payload,
// bailian_trace, burst_gpt_trace) are read from disk. Every prompt's token count is verified
// under the plan's tokenizer.
package dataset

import (
	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/plan/media"
)

// NoTime marks a turn without a timestamp or delay.
const NoTime int64 = -1

// Dataset is what a plan is compiled from.
type Dataset struct {
	// Name is the input kind ("synthetic", "mooncake_trace", "sharegpt", ...).
	Name string
	// SourceSHA256 is the hex SHA-256 of the input bytes (corpus or input file).
	SourceSHA256 string
	// Conversations are the dataset entries; each is sent on one session, turns in order.
	Conversations []Conversation
	// Timed is true when turns carry timestamps, which then give a fixed schedule.
	Timed bool
	// BlockSize is the tokens per hash_id block of Turn.HashIDs (mooncake_trace,
	// bailian_trace); 0 when the input has no hash_ids.
	BlockSize int
	// Graph is true for graph inputs (weka_trace, dag_jsonl): every conversation is a
	// session of agents whose turns carry a Node (graph.go).
	Graph bool
	// LiveReplies says that the bodies carry the server's actual replies (dag_jsonl, where
	// a turn continues its conversation and FORK children inherit it): the plan must use
	// live history.
	LiveReplies bool
}

// Conversation is one dataset entry: one or more turns sent in order on one session.
type Conversation struct {
	// SessionID is the input's session id, or generated.
	SessionID string
	// UserContext is a per-session context sent as its own user message before the first
	// turn's prompt (--user-context-prompt-length); empty when none.
	UserContext string
	// Turns are sent in order; a later turn waits for the previous one to complete.
	Turns []Turn
	// SelfContained is true when every turn already carries its whole context (bailian_trace
	// rows, mooncake_trace messages/payload rows, single_turn lines sharing a session_id): the
	// compiler sends each turn on its own instead of prepending the earlier turns and replies.
	SelfContained bool
	// Agents are a graph conversation's agents (graph.go): the session's own conversation
	// first, then the subagents and child conversations it spawns. Empty otherwise.
	Agents []Agent
}

// Turn is one request of a conversation.
type Turn struct {
	// TimestampNs is the turn's send instant from the input (relative to the input's own
	// origin, before offsets and speed-up), or NoTime.
	TimestampNs int64
	// DelayNs is how long after the previous turn completes this one is sent, or NoTime.
	DelayNs int64
	// System is a system prompt sent before the conversation (first turn's value is used).
	System string
	// Messages, when the input gives whole message lists (OpenAI messages), are sent as is
	// instead of Prompt.
	Messages []endpoint.Message
	// Prompt is this turn's user text.
	Prompt string
	// PromptTokens is the token count of Prompt under the plan's tokenizer, when known exactly.
	PromptTokens int
	// PromptKeys are the prefix reuse keys of Prompt's tokens (AppendPromptKeys), when the
	// loader had the tokens at hand; nil: the renderer tokenizes Prompt for them.
	PromptKeys []uint64
	// OSL is the requested output length in tokens (0: leave unset).
	OSL int
	// Reply is the assistant reply recorded in the input, used as history for later turns;
	// empty means the compiler synthesizes one of OSL tokens.
	Reply string
	// Raw is a request body to send verbatim (raw_payload inputs).
	Raw []byte
	// HashIDs are the trace's prefix block ids (mooncake_trace), kept for trace insight.
	HashIDs []int64
	// Texts, when set, are the input list of an embeddings request (Prompt is the first);
	// synthetic batches of --prompt-batch-size.
	Texts []string
	// Query and Passages feed ranking endpoints.
	Query    string
	Passages []string
	// Extra holds per-turn top-level body members from the input (the trace's extra, a
	// mooncake row's tools, or its messages verbatim when they carry more than role and text
	// content), merged over --extra-inputs. Values are json.RawMessage, compact.
	Extra map[string]any
	// Media are the images, audio clips and videos the input names for this turn (custom
	// files' image/images, audio/audios, video/videos), read when the body is rendered so
	// that the plan never holds them all in memory.
	Media []MediaRef
	// Node places the turn in its session's graph (graph inputs only; nil otherwise).
	Node *Node
	// Blocks is a prompt given as hash-id blocks and synthesized when the body is rendered
	// (weka_trace, whose prompts are too many tokens to hold at once); nil otherwise. Its
	// system part and the rest become a system and a user message.
	Blocks *BlockPrompt
	// ModelRank is the 1-based rank of the turn's recorded model among its session's models
	// in order of first appearance, the session's main model first (weka_trace): with a
	// --model list it sends the list's (rank-1 mod n)-th name. 0: no recorded model.
	ModelRank int
}

// MediaRef is one medium an input names: a local path (relative to Dir), inlined at plan
// time, or a URL, passed through.
type MediaRef struct {
	Kind media.Kind
	Ref  string
	// Dir is the input file's folder, where relative paths start.
	Dir string
}

// TotalTurns counts the turns of every conversation.
func (d *Dataset) TotalTurns() int {
	n := 0
	for i := range d.Conversations {
		n += len(d.Conversations[i].Turns)
	}
	return n
}
