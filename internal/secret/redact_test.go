package secret

import "testing"

func TestRedactURI(t *testing.T) {
	tests := []struct {
		name, uri, want string
	}{
		{"password", "postgres://haade:s3cret@db:5432/catalog?sslmode=disable", "postgres://haade:xxxxx@db:5432/catalog?sslmode=disable"},
		{"user only", "postgres://haade@db:5432/catalog", "postgres://haade@db:5432/catalog"},
		{"no user", "http://rest:8181/catalog", "http://rest:8181/catalog"},
		{"path", "lakehouse/catalog.db", "lakehouse/catalog.db"},
		{"unparsable", "postgres://haade:s3cret@db:port/x", "postgres://haade:s3cret@db:port/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RedactURI(tc.uri); got != tc.want {
				t.Errorf("RedactURI(%q) = %q, want %q", tc.uri, got, tc.want)
			}
		})
	}
}
