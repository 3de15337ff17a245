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
