package layout

import "errors"

// ErrDamaged means the catalogue file is not as the import wrote it: a
// page that is not a page, a list or entry that does not decode. A file
// damaged on disk, or a copy that went wrong; import the catalogue again.
// Callers compare with errors.Is.
var ErrDamaged = errors.New("the catalogue file is damaged")
