package values

// Kind is how a leaf's values are laid out: the one leaf kind the writer
// gathers by and the selector chooses by.
type Kind int

// Leaf kinds.
const (
	KindFixed     Kind = iota // fixed-width values of a whole number of bytes
	KindBool                  // one bit per value
	KindVariable              // variable-width values: offsets and bytes
	KindFSL                   // fixed-size lists of fixed-width items, dimensions outer first
	KindNull                  // Arrow's null type: no values
	KindDict                  // dictionary indices, the items in a page dictionary
	KindPacked                // packed struct rows: the children's fixed-width values back to back
	KindVarPacked             // packed struct records with variable-width children (zipped only)
)

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "kind?"
	}
	return kindNames[k]
}

var kindNames = [...]string{"fixed", "bool", "variable", "fsl", "null", "dict", "packed", "varpacked"}
