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
            'Put your API key in the headers below: {"Authorization": "Bearer cpk_..."}',
        },
      ],
    };
  }
  return result;
}

YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), {
  title: 'Commerce Platform API',
  fetcher,
  defaultHeaders: JSON.stringify({ Authorization: 'Bearer <your API key>' }, null, 2),
  query: '{\n  products(first: 5) {\n    edges { node { id sku name } }\n  }\n}\n',
});
