package machine

import "os"

// sigterm is unused on Windows, where TERM and KILL both terminate.
var sigterm = os.Kill
