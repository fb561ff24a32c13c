package memory

const sysRenameat2 = 382
