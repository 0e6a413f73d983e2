// GraphiQL (graphql-yoga's build) from this origin. Operations go to POST /graphql with the headers
// of the header editor; the schema comes from GET /graphql?private=1, since POST refuses introspection.
self.MonacoEnvironment = {
  globalAPI: false,
  getWorkerUrl: (_moduleId, label) =>
    `/graphql/graphiql/assets/monacoeditorwork/${
      label === 'json'
        ? 'json.worker.bundle.js'
        : label === 'graphql'
          ? 'graphql.worker..bundle.js'
          : 'editor.worker.bundle.js'
    }`,
};

// The schema is read once, before a key is likely to be in the header editor. GraphiQL keeps the
// editor's headers in its storage: when they change, the schema is read again with them (what
// GraphiQL's own Shift-Ctrl-R does), so entering a key is enough.
const HEADERS_ITEM = 'graphiql:headers';
let refetchTimer;
const storage = {
  getItem: (name) => localStorage.getItem(name),
  setItem(name, value) {
    const changed = name === HEADERS_ITEM && localStorage.getItem(name) !== value;
    localStorage.setItem(name, value);
    if (!changed) return;
    clearTimeout(refetchTimer);
    refetchTimer = setTimeout(
      () => self.dispatchEvent(new KeyboardEvent('keydown', { key: 'R', ctrlKey: true, shiftKey: true })),
      300,
    );
  },
  removeItem: (name) => localStorage.removeItem(name),
  clear() {
    for (const name of Object.keys(localStorage)) if (name.startsWith('graphiql:')) localStorage.removeItem(name);
  },
  get length() {
    return Object.keys(localStorage).filter((name) => name.startsWith('graphiql:')).length;
  },
};

async function fetcher(params, options) {
  const headers = { accept: 'application/json', ...(options && options.headers) };
  const introspection = params.operationName === 'IntrospectionQuery' || /\b__schema\b/.test(params.query || '');
  const response = introspection
    ? await fetch('/graphql?private=1', { headers })
    : await fetch('/graphql', {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(params),
      });
  const result = await response.json();
  if (introspection && !response.ok) {
    const reason = (result.errors && result.errors[0] && result.errors[0].message) || `HTTP ${response.status}`;
    return {
      errors: [
        {
          message:
            `The schema could not be loaded: ${reason}. ` +
            'Put your API key in the headers below: {"Authorization": "Bearer cpk_..."}; ' +
            'the schema loads again as soon as the headers change.',
        },
      ],
    };
  }
  return result;
}

YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), {
  title: 'Commerce Platform API',
  fetcher,
  storage,
  defaultHeaders: JSON.stringify({ Authorization: 'Bearer <your API key>' }, null, 2),
  query: '{\n  products(first: 5) {\n    edges { node { id sku name } }\n  }\n}\n',
});
