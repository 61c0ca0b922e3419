/** Parsing of /proc/net/tcp{,6}, to find a TCP connection's client socket when sock_diag cannot. Pure. */

export interface TcpSocketRow {
  /** Local address as bytes (4 for IPv4, 16 for IPv6) and port. */
  local: { address: Uint8Array; port: number };
  remote: { address: Uint8Array; port: number };
  uid: number;
  inode: number;
}

/**
 * Decodes "0100007F:1F90": the address is written as 32-bit words in host (little-endian)
 * order, so each word's four bytes are reversed; the port is plain hex.
 */
export function decodeProcAddress(text: string): { address: Uint8Array; port: number } | undefined {
  const [hex, portHex] = text.split(":");
  if (!hex || !portHex || (hex.length !== 8 && hex.length !== 32) || !/^[0-9A-Fa-f]+$/.test(hex + portHex)) return undefined;
  const address = new Uint8Array(hex.length / 2);
  for (let word = 0; word < hex.length / 8; word++)
    for (let byte = 0; byte < 4; byte++)
      address[word * 4 + byte] = Number.parseInt(hex.slice(word * 8 + (3 - byte) * 2, word * 8 + (4 - byte) * 2), 16);
  return { address, port: Number.parseInt(portHex, 16) };
}

/** The rows of /proc/net/tcp or /proc/net/tcp6 (the header line is skipped). */
export function parseProcNetTcp(text: string): TcpSocketRow[] {
  const rows: TcpSocketRow[] = [];
  for (const line of text.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10) continue;
    const local = decodeProcAddress(fields[1]!);
    const remote = decodeProcAddress(fields[2]!);
    const uid = Number(fields[7]);
    const inode = Number(fields[9]);
    if (local && remote && Number.isInteger(uid) && Number.isInteger(inode)) rows.push({ local, remote, uid, inode });
  }
  return rows;
}

/** An address as bytes: IPv4 as 4 bytes; an IPv4-mapped IPv6 address (::ffff:a.b.c.d) too. Undefined when unparsable. */
export function addressBytes(address: string): Uint8Array | undefined {
  const v4 = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/i.exec(address);
  if (v4) return Uint8Array.from(v4.slice(1).map(Number));
  if (!address.includes(":")) return undefined;
  const [head = "", tail = ""] = address.split("::");
  const words = (part: string) => (part === "" ? [] : part.split(":").map((w) => Number.parseInt(w, 16)));
  const left = words(head);
  const right = address.includes("::") ? words(tail) : [];
  const all = address.includes("::") ? [...left, ...Array(8 - left.length - right.length).fill(0), ...right] : left;
  if (all.length !== 8 || all.some((w) => !Number.isInteger(w) || w < 0 || w > 0xffff)) return undefined;
  return Uint8Array.from(all.flatMap((w) => [w >> 8, w & 0xff]));
}

/** Compares two addresses, an IPv4-mapped IPv6 one equal to its IPv4 form. */
export function sameAddress(a: Uint8Array, b: Uint8Array): boolean {
  const short = (x: Uint8Array) =>
    x.length === 16 && x.subarray(0, 10).every((v) => v === 0) && x[10] === 0xff && x[11] === 0xff ? x.subarray(12) : x;
  const [x, y] = [short(a), short(b)];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}
