// Minimal declarations for the two untyped image packages, covering only the calls this project makes:
// get-pixels decodes JPEGs at run time (data/imageIO.ts requires it lazily); save-pixels is a
// development dependency that the tests use to write JPEG fixtures.

declare module 'get-pixels' {
  import type { NdArray } from 'ndarray';
  /** Decodes an image buffer of the given MIME type to an RGBA ndarray of shape [width, height, 4]. */
  function getPixels(
    data: Buffer,
    mimeType: string,
    cb: (err: Error | null, pixels: NdArray<Uint8Array>) => void,
  ): void;
  export = getPixels;
}

declare module 'save-pixels' {
  import type { NdArray } from 'ndarray';
  /** Encodes an ndarray of shape [width, height, channels] (1, 3 or 4 channels); returns a readable stream of the file bytes. */
  function savePixels(
    array: NdArray,
    type: 'png' | 'jpeg' | 'jpg' | 'gif',
    options?: { quality?: number },
  ): NodeJS.ReadableStream;
  export = savePixels;
}
