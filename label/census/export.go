package census

// Helpers for packages that read a tool's Schema text themselves, so that
// they unescape strings and see values exactly as the decoders do.

// AppendUnescaped appends the decoded form of raw, the content between the
// quotes of a JSON string that a Decoder has accepted (Tool.Schema holds
// only such strings): escapes decoded as CPython's json decodes them,
// surrogate pairs combined, a lone surrogate kept in its WTF-8 form.
func AppendUnescaped(dst, raw []byte) []byte { return appendUnescaped(dst, raw) }
