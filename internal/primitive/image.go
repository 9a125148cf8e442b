package primitive

// ImageResult is a result that carries an image for the caller to look
// at (ui.screenshot). The MCP server sends the image as an image content
// item beside the structured content; the result's JSON, which is what is
// journaled, replayed and delivered later, never holds the bytes, so an
// answer read back after the call (a replay, an arrival) has no image.
type ImageResult interface {
	// Image returns the image's MIME type and encoded bytes; none (nil
	// data) when the result holds no image.
	Image() (mimeType string, data []byte)
}
