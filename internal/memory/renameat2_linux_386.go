package memory

const sysRenameat2 = 353
