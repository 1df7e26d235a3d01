module.exports = {
  debug: true,
  port: 80,
};
