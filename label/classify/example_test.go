package classify_test

import (
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// Label one parameter property from its name and description, as the spec's
// rule reads them: the five gg: classes and, apart, the two non-normative
// buckets.
func ExampleProperty() {
	set := classify.Property("webhook_url", "callback endpoint")
	fmt.Println(set.IDs(classify.Classes))

	set = classify.Property("Authorization", "bearer token")
	fmt.Println(set.IDs(classify.Classes))

	// A delimiter-free camelCase name is not segmented: a known false
	// negative of the lexical rule.
	fmt.Println(classify.Property("clientSecret", "").IDs(classify.Classes))

	fmt.Println(classify.Property("data", "request body").IDs(classify.Buckets))
	// Output:
	// [gg:url-endpoint]
	// [gg:credential-value]
	// []
	// [raw_content_blob]
}
