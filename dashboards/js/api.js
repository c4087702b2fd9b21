// The API, with the signed-in read or admin key as a bearer token. Errors carry the server's message.

const KEY_STORAGE = 'linkpulse.readKey';

export const storedKey = () => localStorage.getItem(KEY_STORAGE);
export const storeKey = (key) => localStorage.setItem(KEY_STORAGE, key);
export const forgetKey = () => localStorage.removeItem(KEY_STORAGE);

/** A failed API call: status 0 for network trouble, 401 for a wrong key; `code`, `field` and
 * `parameter` as the server's error names them. */
export class ApiError extends Error {
  constructor(status, message, { parameter, field, code } = {}) {
    super(message);
    this.status = status;
    this.parameter = parameter;
    this.field = field;
    this.code = code;
  }
}

/** GETs a path of the API with parameters; resolves to the response (checked). */
export async function request(path, parameters, key = storedKey()) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined && value !== null && value !== '') query.set(name, String(value));
  }
  return call(`/v1/${path}?${query}`, { headers: { Authorization: `Bearer ${key}` }, cache: 'no-store' });
}

/** Sends `body` as JSON with `method` to a path of the API; resolves to the answer's JSON. */
export async function send(method, path, body, key = storedKey()) {
  const response = await call(`/v1/${path}`, {
    method, body: JSON.stringify(body), cache: 'no-store',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
  });
  return response.status === 204 ? null : response.json();
}

async function call(url, options) {
  let response;
  try {
    response = await fetch(url, options);
  } catch (error) {
    throw new ApiError(0, 'The server does not answer. Check that linkpulse is running, then retry.');
  }
  if (!response.ok) {
    let message = `The server answered ${response.status}.`;
    let detail = {};
    try {
      const body = await response.json();
      message = body.error?.message ?? message;
      detail = body.error ?? {};
    } catch { /* not JSON */ }
    throw new ApiError(response.status, message, detail);
  }
  return response;
}

/** GETs JSON from the API. */
export async function getJSON(path, parameters, key) {
  return (await request(path, parameters, key)).json();
}
