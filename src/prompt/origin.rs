//! [`TextOrigin`]: where a scalar's text sits in its file, so an offset inside the parsed
//! text maps back to a file line and column (inside block scalars too).
