package settings

import "strings"

// ReadValueFile reads the value in the file that a _FILE variable names: the file by ReadFile's
// rule with the limit MaxValueFile, without its trailing line ends. Every "\n" and "\r" at the
// end goes — what `echo`, editors and Windows add, and what a shell's $(cat file) drops, as
// the official Docker images' _FILE variables do — so a value cannot end with a line end;
// every other byte, blanks included, is kept. A file with nothing else is ErrEmpty.
func ReadValueFile(path string) (string, error) {
	data, err := ReadFile(path, MaxValueFile)
	if err != nil {
		return "", err
	}
	value := strings.TrimRight(string(data), "\r\n")
	if value == "" {
		return "", ErrEmpty
	}
	return value, nil
}
