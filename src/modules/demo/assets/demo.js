// The demo store of /demo/{proxy key}, on the public search endpoints of that key only (no token):
// its settings, search as you type with facets and sorts, and the measurement of what the shopper
// sees (view events) and follows (each hit links to its click_url); and, when the key serves a
// storefront catalog (/ucp/{key}), whether each product shown is in stock at that moment. Text from
// documents is only ever put in the page as text: highlights are split at their <mark> tags, never
// parsed as HTML.
(function () {
  const root = document.getElementById('demo');
  const key = root.dataset.key;
  const api = '/api/instant/search/' + encodeURIComponent(key);
  const catalogApi = '/ucp/' + encodeURIComponent(key);
  const input = document.getElementById('q');
  const sortSelect = document.getElementById('sort');
  const facetsBox = document.getElementById('facets');
  const hitsBox = document.getElementById('hits');
  const statusBox = document.getElementById('status');
  const sessionId = 'demo-' + Math.random().toString(36).slice(2, 12);
  const state = {
    alias: null,
    facets: [],
    labels: {},
    optionsCount: {},
    sortOptions: [],
    q: '',
    filters: {},
    sort: [],
    // Whether the key serves a storefront catalog, whose lookups say what is in stock.
    catalog: root.dataset.catalog === 'true',
  };
  let latest = 0;
  let typingTimer;
  let viewTimer;

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };
  const unescapeHtml = (text) => text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name) => ENTITIES[name]);

  /** A highlight (escaped text with <mark> around matched words) as text nodes and <mark> elements. */
  function highlighted(value) {
    const fragment = document.createDocumentFragment();
    let marked = false;
    for (const part of String(value).split(/(<mark>|<\/mark>)/)) {
      if (part === '<mark>' || part === '</mark>') marked = part === '<mark>';
      else if (part)
        fragment.appendChild(
          marked ? element('mark', '', unescapeHtml(part)) : document.createTextNode(unescapeHtml(part)),
        );
    }
    return fragment;
  }

  /** A field of a hit: its highlight when the engine made one, else its value as text. */
  function field(hit, name) {
    const highlight = hit._highlightResult && hit._highlightResult[name];
    const first = Array.isArray(highlight) ? highlight[0] : highlight;
    if (first && typeof first.value === 'string') return highlighted(first.value);
    const value = hit[name];
    return document.createTextNode(
      value === null || value === undefined ? '' : String(Array.isArray(value) ? value.join(', ') : value),
    );
  }

  const isWebUrl = (url) => typeof url === 'string' && /^https?:\/\//i.test(url);

  function renderHits(result) {
    hitsBox.replaceChildren();
    for (const hit of result.hits) {
      const item = element('li', 'hit');
      item.dataset.id = hit.id;
      const target = isWebUrl(hit.click_url) ? hit.click_url : isWebUrl(hit.url) ? hit.url : null;
      const title = element(target ? 'a' : 'span', 'title');
      if (target) title.href = target;
      title.appendChild(field(hit, 'name' in hit ? 'name' : 'title' in hit ? 'title' : 'id'));
      item.appendChild(title);
      const facts = state.facets.filter((name) => hit[name] !== undefined && hit[name] !== null);
      if (facts.length > 0) {
        const line = element('p', 'facts');
        facts.forEach((name, i) => {
          if (i > 0) line.appendChild(document.createTextNode(' · '));
          line.appendChild(field(hit, name));
        });
        item.appendChild(line);
      }
      if (typeof hit.price === 'number') item.appendChild(element('p', 'price', hit.price.toFixed(2)));
      if (typeof hit.description === 'string')
        item.appendChild(element('p', 'description')).appendChild(field(hit, 'description'));
      hitsBox.appendChild(item);
    }
  }

  function renderFacets(result) {
    facetsBox.replaceChildren();
    for (const name of state.facets) {
      const counts = (result.facets && result.facets[name]) || {};
      const chosen = state.filters[name] || [];
      const values = Object.keys(counts).sort((a, b) => counts[b] - counts[a] || a.localeCompare(b));
      for (const value of chosen) if (!values.includes(value)) values.unshift(value);
      if (values.length === 0) continue;
      const group = element('fieldset', 'facet');
      group.appendChild(element('legend', '', state.labels[name] || name));
      for (const value of values.slice(0, Math.max(state.optionsCount[name] || 10, chosen.length))) {
        const label = element('label', 'facet-value');
        const box = element('input');
        box.type = 'checkbox';
        box.checked = chosen.includes(value);
        box.addEventListener('change', () => {
          const now = state.filters[name] || [];
          state.filters[name] = box.checked ? now.concat([value]) : now.filter((v) => v !== value);
          search();
        });
        label.appendChild(box);
        label.appendChild(element('span', 'facet-name', value));
        label.appendChild(element('span', 'facet-count', String(counts[value] || 0)));
        group.appendChild(label);
      }
      facetsBox.appendChild(group);
    }
  }

  /** The identifiers a lookup of the storefront catalog knows a hit by: its id, and its SKU if it has one. */
  const identifiersOf = (hit) => [hit.id, hit.sku].filter((id) => typeof id === 'string' && id !== '');

  /**
   * Marks each hit shown In stock or Out of stock, from one lookup of the storefront catalog with
   * the hits' identifiers: the catalog reads stock at that moment. A hit the catalog does not know
   * (no product mapped from it) gets no mark.
   */
  async function showAvailability(result, ticket) {
    if (!state.catalog || result.hits.length === 0) return;
    const ids = [...new Set(result.hits.flatMap(identifiersOf))].slice(0, 50);
    let body;
    try {
      const response = await fetch(catalogApi + '/catalog/lookup', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'ucp-agent': 'profile="' + location.origin + '/demo/' + encodeURIComponent(key) + '"',
        },
        body: JSON.stringify({ ids }),
      });
      body = response.ok ? await response.json() : null;
    } catch {
      body = null;
    }
    if (ticket !== latest || !body || !Array.isArray(body.products)) return;
    const available = new Map();
    for (const product of body.products)
      for (const variant of product.variants || [])
        for (const input of variant.inputs || [])
          if (variant.availability) available.set(input.id, variant.availability.available === true);
    for (const hit of result.hits) {
      const id = identifiersOf(hit).find((candidate) => available.has(candidate));
      const item = [...hitsBox.children].find((node) => node.dataset.id === hit.id);
      if (id === undefined || !item) continue;
      const inStock = available.get(id);
      item.appendChild(
        element('p', inStock ? 'stock in-stock' : 'stock out-of-stock', inStock ? 'In stock' : 'Out of stock'),
      );
    }
  }

  /** Views of the hits shown, sent once the shopper stops typing (one batch per settled search). */
  function reportViews(result) {
    clearTimeout(viewTimer);
    if (result.hits.length === 0) return;
    viewTimer = setTimeout(() => {
      const events = result.hits.map((hit) => ({
        type: 'view',
        query_id: result.query_id,
        document_id: hit.id,
        position: hit.__position,
        session_id: sessionId,
      }));
      fetch(api + '/events', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ data: events }),
        keepalive: true,
      }).catch(() => undefined);
    }, 1000);
  }

  async function search() {
    const ticket = ++latest;
    const filters = Object.keys(state.filters)
      .filter((name) => state.filters[name].length > 0)
      .map((name) => ({ key: name, operator: 'in', values: state.filters[name] }));
    const context = {
      q: state.q,
      facets: state.facets,
      disjunctive_facets: true,
      filters,
      sort: state.sort,
      session_id: sessionId,
    };
    if (state.alias) context.indices = [state.alias];
    let response;
    try {
      response = await fetch(api, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ data: [context] }),
      });
    } catch {
      if (ticket === latest) statusBox.textContent = 'The search service cannot be reached.';
      return;
    }
    const body = await response.json().catch(() => null);
    // An answer to an earlier keystroke arriving late is dropped.
    if (ticket !== latest) return;
    if (!response.ok || !body) {
      statusBox.textContent =
        'Search failed: ' + ((body && body.error && body.error.message) || 'HTTP ' + response.status);
      return;
    }
    const result = body.data[0].results[0];
    statusBox.textContent =
      result.count === 0
        ? 'No products match' + (state.q ? ' "' + state.q + '".' : '.')
        : result.count + (result.count === 1 ? ' product' : ' products') + (state.q ? ' for "' + state.q + '"' : '');
    renderHits(result);
    renderFacets(result);
    reportViews(result);
    showAvailability(result, ticket);
  }

  async function start() {
    const response = await fetch(api + '/settings');
    const body = await response.json().catch(() => null);
    if (!response.ok || !body) {
      statusBox.textContent = 'The search settings could not be read (HTTP ' + response.status + ').';
      return;
    }
    const settings = body.data;
    const entry =
      settings.indexes.find((index) => index.alias === (settings.filters && settings.filters.show_for)) ||
      settings.indexes[0];
    state.alias = entry.alias;
    state.facets = entry.filters.filter((filter) => filter.type !== 'NUMBER').map((filter) => filter.key);
    for (const filter of entry.filters) {
      state.labels[filter.key] = filter.label || filter.key;
      if (filter.options_count) state.optionsCount[filter.key] = filter.options_count;
    }
    state.sortOptions = entry.sort_options || [];
    state.sort = entry.sort || [];
    if (state.sortOptions.length > 0) {
      state.sortOptions.forEach((option, i) =>
        sortSelect.appendChild(element('option', '', option.label)).setAttribute('value', String(i)),
      );
      sortSelect.hidden = false;
      sortSelect.addEventListener('change', () => {
        state.sort = state.sortOptions[Number(sortSelect.value)].sort;
        search();
      });
    }
    input.addEventListener('input', () => {
      clearTimeout(typingTimer);
      typingTimer = setTimeout(() => {
        state.q = input.value;
        search();
      }, 120);
    });
    search();
  }

  start();
})();
