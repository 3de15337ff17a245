// Throw-away PKI for TLS tests, made with the openssl CLI: a trusted CA and a server
// certificate for the test hosts, an untrusted CA with its own server certificate, and a
// trusted certificate for the wrong host name. EC P-256 keys and ECDSA-SHA256 signatures,
// which the device's mbedtls 2.28 verifies; keyUsage / extendedKeyUsage are set as mbedtls
// checks them (keyCertSign on CAs, digitalSignature + serverAuth on servers).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';

const openssl = (args, input) => execFileSync('openssl', args, { input, stdio: ['pipe', 'pipe', 'pipe'] }).toString();

// Positive 64-bit serials, so a regenerated certificate never collides with a cached one.
const serial = () => {
  const b = randomBytes(8);
  b[0] &= 0x7f;
  return `0x${b.toString('hex')}`;
};

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

function config(hosts) {
  const san = (names) => names.map((h) => (isIP(h) ? `IP:${h}` : `DNS:${h}`)).join(', ');
  const leaf = (names) => [
    'basicConstraints = critical, CA:FALSE',
    'keyUsage = critical, digitalSignature',
    'extendedKeyUsage = serverAuth',
    'subjectKeyIdentifier = hash',
    'authorityKeyIdentifier = keyid',
    `subjectAltName = ${san(names)}`,
  ].join('\n');
  return [
    '[req]', 'distinguished_name = dn', '[dn]',
    '[ca_ext]',
    'basicConstraints = critical, CA:TRUE',
    'keyUsage = critical, keyCertSign, cRLSign',
    'subjectKeyIdentifier = hash',
    '[server_ext]', leaf(hosts),
    '[wrong_ext]', leaf(['wrong.example']),
    '',
  ].join('\n');
}

/**
 * @param {string} dir created if missing; files are overwritten
 * @param {{hosts?: string[]}} options DNS names and IP addresses for the servers' SAN
 */
export async function makeTestCA(dir, { hosts = ['localhost', '127.0.0.1'] } = {}) {
  mkdirSync(dir, { recursive: true });
  const p = (name) => join(dir, name);
  const cnf = p('openssl.cnf');
  writeFileSync(cnf, config(hosts));

  const ca = (name, cn) => {
    openssl(['req', '-x509', ...EC, '-keyout', p(`${name}.key`), '-out', p(`${name}.pem`), '-subj', `/CN=${cn}`,
      '-days', '3650', '-sha256', '-set_serial', serial(), '-config', cnf, '-extensions', 'ca_ext']);
  };
  const leaf = (name, caName, cn, ext) => {
    const csr = openssl(['req', '-new', ...EC, '-keyout', p(`${name}.key`), '-subj', `/CN=${cn}`, '-config', cnf]);
    openssl(['x509', '-req', '-CA', p(`${caName}.pem`), '-CAkey', p(`${caName}.key`), '-set_serial', serial(),
      '-days', '825', '-sha256', '-extfile', cnf, '-extensions', ext, '-out', p(`${name}.pem`)], csr);
  };

  ca('ca', 'xsclaw test CA');
  ca('other-ca', 'xsclaw untrusted CA');
  leaf('server', 'ca', hosts[0], 'server_ext');
  leaf('other-server', 'other-ca', hosts[0], 'server_ext');
  leaf('wrong-server', 'ca', 'wrong.example', 'wrong_ext');

  const read = (name) => readFileSync(p(name), 'utf8');
  const caPem = read('ca.pem');
  const caDer = Buffer.from(caPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  writeFileSync(p('ca.der'), caDer);

  const pair = (name) => ({ cert: read(`${name}.pem`), key: read(`${name}.key`) });
  return {
    dir,
    paths: {
      ca: p('ca.pem'),
      caDer: p('ca.der'),
      server: p('server.pem'),
      serverKey: p('server.key'),
      otherCa: p('other-ca.pem'),
      otherServer: p('other-server.pem'),
      otherServerKey: p('other-server.key'),
      wrongServer: p('wrong-server.pem'),
      wrongServerKey: p('wrong-server.key'),
    },
    ca: { pem: caPem, der: caDer },
    server: pair('server'),
    other: { ca: read('other-ca.pem'), ...pair('other-server') },
    wrong: pair('wrong-server'),
  };
}

/**
 * The PKI of the openssl s_server matrix (test/e2e/tls-openssl.test.mjs, the TLS
 * bench), on top of makeTestCA's: a server certificate with an RSA 2048 key from
 * the same CA; a three-level chain (RSA 4096 root -> P-256 intermediate ->
 * P-256 server); a server certificate that expired in 2020. About 1-3 s, most
 * of it the 4096-bit key. Paths in the result's `paths`, DER of the roots in
 * `der`.
 */
export async function makeMatrixPKI(dir, options) {
  const base = await makeTestCA(dir, options);
  const hosts = options?.hosts ?? ['localhost', '127.0.0.1'];
  const p = (name) => join(dir, name);
  const cnf = p('matrix.cnf');
  const san = hosts.map((h) => (isIP(h) ? `IP:${h}` : `DNS:${h}`)).join(', ');
  writeFileSync(p('index.txt'), '');
  writeFileSync(cnf, [
    '[req]', 'distinguished_name = dn', '[dn]',
    '[ca]', 'default_ca = expiring',
    '[expiring]', `database = ${p('index.txt')}`, `new_certs_dir = ${dir}`, 'rand_serial = yes',
    'policy = any', 'default_md = sha256', 'unique_subject = no', 'copy_extensions = none',
    '[any]', 'commonName = supplied',
    '[root_ext]', 'basicConstraints = critical, CA:TRUE', 'keyUsage = critical, keyCertSign, cRLSign', 'subjectKeyIdentifier = hash',
    '[intermediate_ext]', 'basicConstraints = critical, CA:TRUE, pathlen:0', 'keyUsage = critical, keyCertSign, cRLSign',
    'subjectKeyIdentifier = hash', 'authorityKeyIdentifier = keyid',
    '[leaf_ext]', 'basicConstraints = critical, CA:FALSE', 'keyUsage = critical, digitalSignature, keyEncipherment',
    'extendedKeyUsage = serverAuth', 'subjectKeyIdentifier = hash', 'authorityKeyIdentifier = keyid', `subjectAltName = ${san}`,
    '',
  ].join('\n'));
  const csr = (name, key) => openssl(['req', '-new', ...key, '-keyout', p(`${name}.key`), '-subj', `/CN=${hosts[0]}`, '-config', cnf]);
  const sign = (name, request, caName, ext, days = '825') => openssl(['x509', '-req', '-CA', p(`${caName}.pem`), '-CAkey', p(`${caName}.key`),
    '-set_serial', serial(), '-days', days, '-sha256', '-extfile', cnf, '-extensions', ext, '-out', p(`${name}.pem`)], request);

  // RSA server certificate from the test CA.
  sign('rsa-server', csr('rsa-server', ['-newkey', 'rsa:2048', '-nodes']), 'ca', 'leaf_ext');
  // Three levels under a 4096-bit root.
  openssl(['req', '-x509', '-newkey', 'rsa:4096', '-nodes', '-keyout', p('root4096.key'), '-out', p('root4096.pem'),
    '-subj', '/CN=xsclaw test root 4096', '-days', '3650', '-sha256', '-set_serial', serial(), '-config', cnf, '-extensions', 'root_ext']);
  const intermediate = openssl(['req', '-new', ...EC, '-keyout', p('intermediate.key'), '-subj', '/CN=xsclaw test intermediate', '-config', cnf]);
  sign('intermediate', intermediate, 'root4096', 'intermediate_ext', '1825');
  sign('chain-server', csr('chain-server', EC), 'intermediate', 'leaf_ext');
  // Expired: valid for January 2020 only.
  writeFileSync(p('expired.csr'), csr('expired-server', EC));
  openssl(['ca', '-batch', '-config', cnf, '-keyfile', p('ca.key'), '-cert', p('ca.pem'), '-in', p('expired.csr'), '-out', p('expired-server.pem'),
    '-startdate', '20200101000000Z', '-enddate', '20200201000000Z', '-extensions', 'leaf_ext', '-notext']);

  const der = (name) => Buffer.from(readFileSync(p(name), 'utf8').replace(/-----[^-]+-----|\s/g, ''), 'base64');
  return {
    ...base,
    paths: {
      ...base.paths,
      rsaServer: p('rsa-server.pem'), rsaServerKey: p('rsa-server.key'),
      root4096: p('root4096.pem'), intermediate: p('intermediate.pem'),
      chainServer: p('chain-server.pem'), chainServerKey: p('chain-server.key'),
      expiredServer: p('expired-server.pem'), expiredServerKey: p('expired-server.key'),
    },
    der: { ca: base.ca.der, root4096: der('root4096.pem'), otherCa: der('other-ca.pem') },
  };
}
