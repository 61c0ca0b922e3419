/** /etc/passwd and /etc/group as agentd needs them: names to ids. Pure; local files only (no NSS). */

export interface Account {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

export interface Group {
  name: string;
  gid: number;
  members: readonly string[];
}

export function parsePasswd(text: string): Account[] {
  const accounts: Account[] = [];
  for (const line of text.split("\n")) {
    const [name, , uid, gid, , home] = line.split(":");
    if (!name || uid === undefined || gid === undefined || !/^\d+$/.test(uid) || !/^\d+$/.test(gid)) continue;
    accounts.push({ name, uid: Number(uid), gid: Number(gid), home: home || "/" });
  }
  return accounts;
}

export function parseGroups(text: string): Group[] {
  const groups: Group[] = [];
  for (const line of text.split("\n")) {
    const [name, , gid, members] = line.split(":");
    if (!name || gid === undefined || !/^\d+$/.test(gid)) continue;
    groups.push({ name, gid: Number(gid), members: (members ?? "").split(",").filter(Boolean) });
  }
  return groups;
}

/** A user's groups as login would set them: the primary one, then every group listing the user. */
export function groupsOf(account: Account, groups: readonly Group[]): number[] {
  const gids = [account.gid];
  for (const group of groups) if (group.members.includes(account.name) && !gids.includes(group.gid)) gids.push(group.gid);
  return gids;
}
