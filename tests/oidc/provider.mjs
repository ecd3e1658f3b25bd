// A real OpenID provider (oidc-provider, a certified implementation) on loopback for the approval
// page's sign-in tests. Started with one JSON argument:
//   {"clients": [{"client_id", "client_secret", "redirect_uris"}], "resource": URL}
// it listens on 127.0.0.1 on a free port and prints one JSON line {"issuer": URL}. People sign in
// with its development login form (any password) as one of ACCOUNTS; consent is implied. Tests
// mint a person's JWT access token for the resource at GET /test/access-token?sub=ID (the
// provider's own AccessToken model, signed with its own keys).
import http from 'node:http';
import Provider from 'oidc-provider';

const ACCOUNTS = {
  alice: { email: 'alice@example.org', name: 'Alice', groups: ['developers'] },
  bob: { email: 'bob@example.org', name: 'Bob', groups: ['ci-approvers'] },
  carol: { email: 'carol@example.org', name: 'Carol', groups: ['developers'] },
};

const config = JSON.parse(process.argv[2]);
const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: config.clients.map((c) => ({
    ...c, grant_types: ['authorization_code'], response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  })),
  async findAccount(ctx, id) {
    if (!ACCOUNTS[id]) return undefined;
    return {
      accountId: id,
      async claims() {
        const a = ACCOUNTS[id];
        return {
          sub: id, email: a.email, email_verified: true, name: a.name, preferred_username: id, groups: a.groups,
        };
      },
    };
  },
  claims: {
    openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username', 'groups'],
  },
  conformIdTokenClaims: false, // the ID token carries the claims its scopes name (no userinfo call)
  scopes: ['openid', 'email', 'profile', 'woodpecker'],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => config.resource,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({ scope: 'woodpecker', audience: config.resource, accessTokenFormat: 'jwt' }),
    },
  },
  // First-party clients: the grant is implied, so no consent screen.
  async loadExistingGrant(ctx) {
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope('openid email profile');
    await grant.save();
    return grant;
  },
  ttl: { Session: 3600, Interaction: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60, Grant: 3600 },
});
provider.proxy = false;

provider.use(async (ctx, next) => {
  if (ctx.path !== '/test/access-token') return next();
  const sub = ctx.query.sub;
  const client = await provider.Client.find(config.clients[0].client_id);
  const token = new provider.AccessToken({ accountId: sub, client, scope: 'woodpecker', gty: 'authorization_code' });
  token.resourceServer = new provider.ResourceServer(config.resource, {
    scope: 'woodpecker', audience: config.resource, accessTokenFormat: 'jwt',
  });
  ctx.body = { access_token: await token.save() };
});

server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
