// ES module entry point: the same API as the CommonJS one (index.js).
import ferrule from './index.js';

export const { App, cors, compress, Response, HttpError, EventStream, sse, WebSocket, version, problemJson } = ferrule;
export default ferrule;
