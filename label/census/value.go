package census

// A generic JSON value, as CPython's json.loads builds it, for Inspector:
// it needs every key path of a line, where the decoder reads only the
// classifier's. It is built with the Lexer on a line the Decoder has
// validated.

// jsonKind is the Python type a JSON value decodes to.
type jsonKind uint8

const (
	jNull jsonKind = iota
	jBool
	jInt
	jFloat
	jString
	jList
	jDict
)

// jsonValue is a decoded value: its kind, a list's elements, or a dict's
// keys in first-insertion order with the last value given to each.
type jsonValue struct {
	kind jsonKind
	list []*jsonValue
	keys []string
	vals map[string]*jsonValue
}

// buildValue builds the value at p of text the Decoder has validated; depth
// is the nesting of the container holding it. It returns the position past
// the value.
func buildValue(lx *Lexer, p, depth int) (*jsonValue, int, error) {
	data := lx.data
	if p >= len(data) {
		return nil, p, synErr(p, msgValue)
	}
	switch data[p] {
	case '{':
		if depth+1 > MaxDepth {
			return nil, p, synErr(p, msgDepth)
		}
		v := &jsonValue{kind: jDict, vals: map[string]*jsonValue{}}
		p, done := lx.ObjOpen(p)
		for !done {
			end, esc, q, err := lx.Key(p)
			if err != nil {
				return nil, q, err
			}
			k := data[p+1 : end-1]
			if esc {
				k = appendUnescaped(nil, k)
			}
			e, q, err := buildValue(lx, q, depth+1)
			if err != nil {
				return nil, q, err
			}
			if _, ok := v.vals[string(k)]; !ok {
				v.keys = append(v.keys, string(k))
			}
			v.vals[string(k)] = e
			if p, done, err = lx.ObjNext(q); err != nil {
				return nil, p, err
			}
		}
		return v, p, nil
	case '[':
		if depth+1 > MaxDepth {
			return nil, p, synErr(p, msgDepth)
		}
		v := &jsonValue{kind: jList}
		p, done := lx.ArrOpen(p)
		for !done {
			e, q, err := buildValue(lx, p, depth+1)
			if err != nil {
				return nil, q, err
			}
			v.list = append(v.list, e)
			if p, done, err = lx.ArrNext(q); err != nil {
				return nil, p, err
			}
		}
		return v, p, nil
	case '"':
		end, _, err := lx.String(p)
		return &jsonValue{kind: jString}, end, err
	}
	end, kind, err := scanScalar(data, p)
	v := &jsonValue{kind: jInt}
	switch {
	case kind == scalarFloat:
		v.kind = jFloat
	case kind == scalarLiteral && data[p] == 'n':
		v.kind = jNull
	case kind == scalarLiteral:
		v.kind = jBool
	}
	return v, end, err
}
