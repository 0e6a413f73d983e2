/**
 * Examples of the reference (`/docs`): a proxy with two routes, as sent and as answered. A test
 * validates each against its schema in openapi.yaml.
 */

export const PROXY_INPUT_EXAMPLE = {
  key: 'my-shop',
  routes: [
    {
      path: '/images',
      origin: { uri: 'https://my-bucket.s3.eu-central-1.amazonaws.com/images', is_bucket: true },
      settings: { cache: { age: 86_400, is_public: true } },
    },
    {
      path: '*',
      origin: { uri: 'https://shop.example.com', is_bucket: false },
      settings: {
        cache: { age: 60, stale_while_revalidate: 300, key: { ignore_tracking_query: true, sort_query: true } },
      },
    },
  ],
  is_active: true,
};

const NO_AUTH = { is_required: null, scope: null };

export const PROXY_EXAMPLE = {
  key: 'my-shop',
  routes: [
    {
      path: '/images',
      origin: { uri: 'https://my-bucket.s3.eu-central-1.amazonaws.com/images', is_bucket: true },
      settings: {
        cache: {
          age: 86_400,
          is_as_origin: null,
          is_public: true,
          stale_while_revalidate: null,
          key: null,
          compression: null,
        },
        auth: NO_AUTH,
        image: null,
      },
    },
    {
      path: '*',
      origin: { uri: 'https://shop.example.com', is_bucket: false },
      settings: {
        cache: {
          age: 60,
          is_as_origin: null,
          is_public: null,
          stale_while_revalidate: 300,
          key: {
            ignore_query: null,
            only_query: null,
            ignore_tracking_query: true,
            sort_query: true,
            headers: null,
            cookies: null,
            origin_query: null,
          },
          compression: null,
        },
        auth: NO_AUTH,
        image: null,
      },
    },
  ],
  auth: {
    signature: {
      secret: null,
      cache: {
        age: null,
        is_as_origin: null,
        is_public: null,
        stale_while_revalidate: null,
        key: null,
        compression: null,
      },
      auth: NO_AUTH,
    },
  },
  oauth: { issuer: null, client_id: null, authorize_url: null, return_url_key: null },
  is_active: true,
  is_suspended: false,
  tenant_id: '0f8e4a52-3c1d-4b7e-9a65-2d4c8b1e7f30',
  created_at: '2026-11-20T09:30:00.000Z',
  updated_at: '2026-11-24T16:05:12.000Z',
};
